/*
 * coll/coll.h - the schedule-building interface.
 *
 * An algorithm is a pure function: (rank, nranks, topology view, count,
 * datatype, chunk size) -> schedule. A schedule is the list of steps ONE rank
 * performs for one collective: SEND to a peer, RECV from a peer, REDUCE two
 * local regions into a third, COPY a region, or NOP (a join point). Each
 * step names the steps it depends on; a step starts only when all of them
 * have completed. Builders do no I/O and know nothing about transports; the
 * executor (src/exec/exec.c) knows nothing about algorithms.
 *
 * Buffers are named, not pointed to: HC_BUF_SEND is the caller's input,
 * HC_BUF_RECV the caller's output, HC_BUF_TMP a scratch area of
 * sched->tmp_bytes that the executor provides. Offsets and lengths are in
 * bytes. In-place calls alias SEND and RECV at the positions API.md gives;
 * builders receive args->in_place and must not read a SEND region after
 * writing the RECV region that aliases it. A COPY whose source and
 * destination resolve to the same address is skipped by the executor.
 *
 * Tags: a SEND and the RECV that matches it carry the same tag (< 2^20).
 * Within one operation, (sender, receiver, tag) must be unique.
 *
 * Shared memory (node-local fast path, src/comm/shm.h): when every rank of the
 * communicator can load and store every other rank's staging segment,
 * args->shm_bytes > 0 and builders may use two more buffers: HC_BUF_SEG, this
 * rank's staging half for the operation, and HC_BUF_PEER, rank loc.peer's
 * staging half (HC_PEER(q, off); q may be the rank itself). Each half holds
 * args->shm_bytes bytes; its first HC_SEG_RESERVED bytes belong to the
 * executor (it stores its completion flag there), so builders start at
 * HC_SEG_BASE. A rank only ever writes its own half; peers read it. The two
 * halves alternate between consecutive shared-memory operations of a
 * communicator (the executor binds the half of the operation's epoch), so a
 * schedule may overwrite its half without waiting for readers of the
 * previous operation. It must not overwrite it before every reader has
 * finished operation e-2, the last one that used this half: every schedule
 * that writes staging starts its writes after a WAIT with ago = 2 on every
 * rank's completion flag (HC_SEG_DONE). That wait costs nothing in the
 * common case: when this rank's previous operation waited for a flag of
 * every other rank (sched->waits_all), they had all finished e-2 then, and
 * the executor does not even look.
 * Synchronization is by 8-byte flags inside the halves (cache-line aligned
 * offsets of the builder's choice): PUBLISH stores (epoch << 32 | value) into
 * its own half after everything it depends on; WAIT completes once the flag
 * in a peer's half is >= ((epoch - ago) << 32 | value). The epoch is a
 * per-communicator counter of shared-memory operations, so a cached
 * schedule stays valid for every call, and flags only grow.
 * REDUCE_MULTI folds nsrc regions (sched->srcs[src_off ..]) into dst in one
 * pass, left to right (hc_reduce_multi): the same bits on every rank that
 * folds the same sources in the same order. The per-rank forms (a WAIT on
 * HC_PEERS_ALL, a REDUCE_MULTI over every rank's staging) keep a schedule
 * O(chunks) steps instead of O(ranks x chunks) on large communicators.
 *
 * Dependencies are given with HC_DEPS(a, b, ...): a list of earlier step
 * indices; negative entries are ignored, so "the previous step, if any"
 * can be passed as -1. Every add function returns the new step's index, or
 * -1 after an allocation failure (then sched->err is set; builders can
 * check it once at the end).
 */
#ifndef HC_COLL_H_
#define HC_COLL_H_

#include <stddef.h>
#include <stdint.h>
#include <hccl/hccl_types.h>

#include "../topo/view.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HC_BUF_SEND = 0,
    HC_BUF_RECV = 1,
    HC_BUF_TMP = 2,
    HC_NBUFS,               /* the buffers the caller of hc_exec_start binds */
    HC_BUF_SEG = HC_NBUFS,  /* own shared staging half (args->shm_bytes > 0) */
    HC_BUF_PEER,            /* rank loc.peer's staging half */
    HC_NBUFS_ALL
} hc_buf_t;

typedef enum {
    HC_STEP_SEND = 0, /* send `bytes` at `a` to `peer` */
    HC_STEP_RECV,     /* receive `bytes` from `peer` into `dst` */
    HC_STEP_REDUCE,   /* dst = a (op) b, bytes / elemsize elements */
    HC_STEP_COPY,     /* dst = a, `bytes` (memmove) */
    HC_STEP_NOP,      /* completes when its dependencies have */
    HC_STEP_PUBLISH,  /* own flag at dst (HC_BUF_SEG) = epoch << 32 | bytes */
    HC_STEP_WAIT,     /* until the flag at a (HC_BUF_PEER) >= (epoch - ago) << 32 | bytes;
                       * peer HC_PEERS_ALL: every other rank's flag at a.off;
                       * tag > 0: while waiting, prefetch tag lines at dst.off of
                       * the awaited rank's half (the data the flag announces) */
    HC_STEP_REDUCE_MULTI, /* dst = fold of sched->srcs[src_off .. +nsrc), bytes each;
                           * nsrc 0: one source per rank in rank order, rank q's
                           * PEER(q, a.off), the executing rank's own b */
    HC_STEP_READ,     /* dst = `bytes` at a (HC_BUF_SEND or HC_BUF_RECV) of rank
                       * `peer`'s own buffers, read out of its process
                       * (args->cma; HC_SEG_ADDR below) */
    HC_STEP_WRITE,    /* `bytes` at dst (HC_BUF_RECV) of rank `peer`'s buffers = a,
                       * written into its process (likewise) */
    HC_STEP_XREDUCE,  /* 2-rank fold across processes: own dst (HC_BUF_RECV) and
                       * rank `peer`'s dst = own a (HC_BUF_SEND) (op) peer's b
                       * (HC_BUF_SEND), the operands in rank order; with loads
                       * and stores where the peer's buffers are registered
                       * (args->registered; src/features/window.h), else as READ into
                       * dst (in place: TMP at 0), REDUCE, WRITE; tag
                       * HC_XREDUCE_OWN: our dst only (no store into the peer) */
    HC_STEP_KINDS
} hc_step_kind_t;

#define HC_TAG_BITS 20
#define HC_TAG_MAX ((1u << HC_TAG_BITS) - 1)

typedef struct {
    uint64_t off;  /* bytes from the start of the buffer */
    uint8_t buf;   /* hc_buf_t */
    uint8_t ring;  /* HC_BUF_SEG/PEER: off is in the ring entry of this
                    * epoch (HC_SEG_RING_SLOTS below; hc_sched_ring) */
    uint32_t peer; /* HC_BUF_PEER: whose staging half (communicator rank) */
} hc_loc_t;

static inline hc_loc_t hc_loc(hc_buf_t buf, uint64_t off)
{
    hc_loc_t l = {off, (uint8_t)buf, 0, 0};
    return l;
}
static inline hc_loc_t hc_loc_peer(uint32_t peer, uint64_t off)
{
    hc_loc_t l = {off, (uint8_t)HC_BUF_PEER, 0, peer};
    return l;
}
#define HC_SEND(off) hc_loc(HC_BUF_SEND, (off))
#define HC_RECV(off) hc_loc(HC_BUF_RECV, (off))
#define HC_TMP(off) hc_loc(HC_BUF_TMP, (off))
#define HC_SEG(off) hc_loc(HC_BUF_SEG, (off))
#define HC_PEER(q, off) hc_loc_peer((q), (off))

/* Start of a staging half that is the executor's (its completion flag),
 * and the first offset builders use. The completion flag (epoch << 32 once
 * the rank finished the operation of that epoch) may be waited for: a WAIT
 * on HC_SEG_DONE with ago = 2 holds until the peers have finished the
 * operation two epochs back, the last one that used this half. */
#define HC_SEG_RESERVED 128u
#define HC_SEG_BASE HC_SEG_RESERVED
#define HC_SEG_DONE 0u
/* Single-copy reads (HC_STEP_READ): an executor whose schedule exposes its
 * buffers (sched->exposes) stores its SEND and RECV addresses at HC_SEG_ADDR and HC_SEG_ADDR +
 * 8 of its half when it starts, before any PUBLISH; a reader takes them
 * after a WAIT on one of that rank's flags of the operation. They stay
 * valid until the owner returns, so a schedule with READ steps ends with
 * a WAIT for every reader's "done reading" flag. */
#define HC_SEG_ADDR 8u
/* The operation's arguments, as every executor bound to arguments
 * (hc_exec_set_args) stores them at HC_SEG_ARGS of its half when it
 * starts, before any PUBLISH: four words, the first written last with
 * release (0 while the others change, a sequence lock): epoch << 32 |
 * root, then coll << 58 | dtype << 52 | op << 48 | count, then the bytes
 * of its SEND and RECV buffers that peers may read or write. A rank that
 * waited for a peer's flag of this epoch compares the peer's words with
 * its own (src/exec/exec.c, "Ranks that disagree"); READ, WRITE and XREDUCE
 * touch a peer's buffers only when they match, and only within its
 * bytes. */
#define HC_SEG_ARGS 32u
/* With more ranks on the host than CPUs, an executor announces where it
 * runs at HC_SEG_PRESENCE of its half when it starts (src/exec/exec.h,
 * hc_exec_awaits_running): epoch << 32 | (CPU + 1) << 1 | waiting, where
 * waiting is set while its wait loop yields the CPU. */
#define HC_SEG_PRESENCE 24u
/* The half's bell, on a line of its own: two 32-bit words, a counter the
 * owner bumps (and FUTEX_WAKEs) after a flag store when the second word,
 * the number of peers asleep on the bell, is not 0 (src/exec/wait.h). */
#define HC_SEG_WAKE 64u
/* Run-ahead for small operations. A location marked ring (hc_sched_ring)
 * at offset o addresses o + ((epoch / 2) % HC_SEG_RING_SLOTS) *
 * HC_SEG_RING_BYTES of the half: a builder that keeps a region of
 * HC_SEG_RING_SLOTS entries of HC_SEG_RING_BYTES for such data and flags
 * gives every operation of its half an entry of its own until epoch + 2 *
 * HC_SEG_RING_SLOTS, so its writer needs to wait only for the readers of
 * that epoch (a WAIT on HC_SEG_DONE with ago = 2 * HC_SEG_RING_SLOTS)
 * instead of those of epoch - 2: a Broadcast root can run that many
 * operations ahead of a slow reader. */
#define HC_SEG_RING_SLOTS 32u
#define HC_SEG_RING_BYTES 512u
/* WAIT: every rank but the executing one. */
#define HC_PEERS_ALL UINT32_MAX

typedef struct {
    uint8_t kind;     /* hc_step_kind_t */
    uint8_t ago;      /* WAIT: the value belongs to operation epoch - ago (0, 2, or
                       * 2 * HC_SEG_RING_SLOTS for a ring writer's guard) */
    uint16_t nsrc;    /* REDUCE_MULTI: number of sources */
    uint32_t peer;    /* SEND/RECV: communicator rank */
    uint32_t tag;     /* SEND/RECV */
    uint32_t src_off; /* REDUCE_MULTI: first source in sched->srcs */
    hc_loc_t dst, a, b;
    uint64_t bytes;   /* PUBLISH/WAIT: the flag value (< 2^32) */
    uint32_t dep_off; /* first dependency in sched->deps */
    uint32_t ndeps;
} hc_step_t;

typedef struct hc_sched {
    hc_step_t *steps;
    uint32_t nsteps, steps_cap;
    uint32_t *deps;
    uint32_t ndeps, deps_cap;
    uint64_t tmp_bytes; /* scratch the executor must provide */
    uint64_t seg_bytes; /* shared staging used (<= args->shm_bytes); 0: none */
    hc_loc_t *srcs;     /* REDUCE_MULTI sources */
    uint32_t nsrcs, srcs_cap;
    uint32_t nmsgs;     /* SEND and RECV steps (0: no transport needed) */
    uint8_t exposes;    /* the executor publishes its SEND and RECV addresses for
                         * peers' READ steps (HC_SEG_ADDR) */
    uint8_t waits_all;  /* has a WAIT on HC_PEERS_ALL with ago 0 (coll.h top) */
    uint8_t branched;   /* a step that is a message, or that does not depend on the
                         * step before it: without one the schedule is a chain,
                         * which the executor runs in step order with no
                         * dependency bookkeeping (src/exec/exec.c, run_chain) */
    uint64_t recv_end;  /* end of the highest RECV range a local step writes */
    uint8_t nt_recv;    /* COPY and REDUCE_MULTI steps write RECV (from HC_COLD_MIN
                         * bytes) with non-temporal stores: it is larger than the
                         * caches (args->nt_recv; src/exec/exec.c cold_split) */
    /* a tiny message through shared staging that src/comm/fastlane.h may run
     * inline when it repeats (set by its builder): only COPY, REDUCE,
     * REDUCE_MULTI, PUBLISH and WAIT steps, no scratch, no exposed
     * addresses (test/unit/check_sched.c test_fast_shapes) */
    uint8_t fast;
    /* every WAIT of this rank is on one producer that itself never waits
     * during the operation (set by its builder; a Broadcast reader whose
     * root fills at most two slots): with more ranks than cores the waiter
     * keeps its CPU while the producer runs on another one
     * (src/exec/exec.h, hc_exec_awaits_running) */
    uint8_t spin_on_producer;
    uint64_t gen;       /* changes with every step added (process-wide unique): the
                         * executor keeps its dependency index per generation */
    size_t esize;       /* element size, for REDUCE */
    int err;            /* HCCL_E_MEMORY after a failed add */
    const char *algo;   /* name of the algorithm that built it */
} hc_sched_t;

/* ---- the collectives ---------------------------------------------- */

typedef enum {
    HC_COLL_ALLREDUCE = 0,
    HC_COLL_BROADCAST,
    HC_COLL_REDUCE,
    HC_COLL_REDUCESCATTER,
    HC_COLL_ALLGATHER,
    HC_COLL_SCATTER,
    HC_COLL_ALLTOALL,
    HC_COLL_ALLTOALLV,
    HC_COLL_BARRIER,
    HC_COLL_LAST
} hc_coll_t;

/*
 * Buffer conventions (count is in elements of esize bytes):
 *  ALLREDUCE      SEND count, RECV count; in place: SEND == RECV.
 *  BROADCAST      RECV count on every rank (SEND is the same buffer).
 *  REDUCE         SEND count; RECV count on root only (NULL elsewhere).
 *  REDUCESCATTER  SEND nranks*count, RECV count;
 *                 in place: RECV == SEND + rank*count*esize.
 *                 With scounts/sdispls (HcclReduceScatterV): block i of
 *                 SEND is scounts[i] elements at sdispls[i] (scounts the
 *                 same on every rank, sdispls this rank's layout); count
 *                 == scounts[rank] (so it differs between ranks); in
 *                 place: RECV == SEND + sdispls[rank]*esize. Without
 *                 them, blocks are equal.
 *  ALLGATHER      SEND count, RECV nranks*count;
 *                 in place: SEND == RECV + rank*count*esize.
 *  SCATTER        SEND nranks*count on root only, RECV count;
 *                 in place (root): RECV == SEND + root*count*esize.
 *  ALLTOALL       SEND nranks*count, RECV nranks*count.
 *  ALLTOALLV      SEND/RECV as given by counts/displs (elements).
 *  BARRIER        no buffers, count 0.
 */


typedef struct hc_coll_args {
    hc_coll_t coll;
    uint32_t rank, nranks;
    uint32_t root;
    uint64_t count;         /* elements; see the conventions above */
    size_t esize;           /* bytes per element */
    HcclDataType dtype;
    HcclReduceOp op;        /* reducing collectives; AVG arrives as SUM */
    int in_place;
    int deterministic;      /* fixed reduction order (see docs) */
    uint64_t chunk_bytes;   /* pipelining chunk; 0 = algorithm's choice */
    uint64_t shm_bytes;     /* bytes of each rank's shared staging half that every
                             * rank can reach; 0 = no shared memory (coll.h top) */
    int cma;                /* with shm_bytes: every rank can read every other's
                             * memory (process_vm_readv): HC_STEP_READ works */
    int iov;                /* SEND and RECV are scatter/gather lists (fused
                             * AllReduce, src/sched/fusion.c): no READ or WRITE steps */
    int nt_recv;            /* the tuning rule's option nt: copies and folds into
                             * RECV use non-temporal stores (hc_sched_t.nt_recv) */
    int oversub;            /* more ranks on the host than CPUs online: ranks
                             * take turns on a core (the same on every rank) */
    int registered;         /* the communicator has registered buffers
                             * (HcclCommRegister; the same on every rank): CMA
                             * AllReduce folds with HC_STEP_XREDUCE */
    /* ALLTOALLV: arrays of nranks entries, in elements; REDUCESCATTER:
     * scounts and sdispls, or NULL (equal blocks) */
    const uint64_t *scounts, *sdispls, *rcounts, *rdispls;
    const hc_topo_view_t *topo; /* never NULL */
} hc_coll_args_t;

/* The blocks are given by the arrays (ALLTOALLV, REDUCESCATTER's V form):
 * a schedule depends on them, not only on count, and count may differ
 * between ranks. */
static inline int hc_args_v(const hc_coll_args_t *a)
{
    return a->scounts != NULL;
}

/* The end of the furthest non-empty block of n (counts, displs), in
 * elements. */
static inline uint64_t hc_v_end(const uint64_t *counts, const uint64_t *displs, uint32_t n)
{
    uint64_t end = 0;
    for (uint32_t i = 0; i < n; i++)
        if (counts[i] && displs[i] + counts[i] > end)
            end = displs[i] + counts[i];
    return end;
}

typedef int (*hc_build_fn)(const hc_coll_args_t *args, hc_sched_t *s);
/* Why an algorithm cannot run for these args (NULL = it can). */
typedef const char *(*hc_usable_fn)(const hc_coll_args_t *args);

typedef struct hc_algo {
    int id;                /* index in its collective's table */
    const char *name;      /* as users type it in HCCL_*_ALGO */
    const char *alias;     /* second accepted spelling, or NULL */
    const char *desc;
    hc_build_fn build;
    hc_usable_fn usable;   /* NULL = always usable */
    unsigned flags;        /* HC_ALGO_F_* (src/comm/tune.c reads them) */
} hc_algo_t;

/* hc_algo_t.flags. DET: every element is reduced in the canonical order of
 * deterministic mode (coll/prims.h; docs/ALGORITHMS.md), whatever the count
 * or chunking; in deterministic mode src/comm/tune.c routes the other reducing
 * algorithms to one that has it. RING_ORDER: follows topo->ring.
 * RING_CHUNK: args->chunk_bytes defaults to HCCL_RING_CHUNK_SIZE. */
#define HC_ALGO_F_DET 0x1u
#define HC_ALGO_F_RING_ORDER 0x2u
#define HC_ALGO_F_RING_CHUNK 0x4u

/* The algorithm tables (coll/algos.c). */
const hc_algo_t *hc_coll_algos(hc_coll_t coll, int *nalgos);
const hc_algo_t *hc_coll_find_algo(hc_coll_t coll, const char *name);
const char *hc_coll_name(hc_coll_t coll);

/* ---- building ------------------------------------------------------ */

void hc_sched_init(hc_sched_t *s, size_t esize);
void hc_sched_reset(hc_sched_t *s); /* keep the memory, drop the steps */
void hc_sched_free(hc_sched_t *s);
/* Bytes rank `rank` of `nranks` sends to ranks of other nodes (by
 * v->node_of) in schedule s; 0 on one node. */
uint64_t hc_sched_xnode_bytes(const hc_sched_t *s, const hc_topo_view_t *v, uint32_t rank,
                              uint32_t nranks);

#define HC_DEPS(...) ((const int32_t[]){__VA_ARGS__, INT32_MIN})
#define HC_NODEPS HC_DEPS(-1)

int32_t hc_sched_send(hc_sched_t *s, uint32_t peer, uint32_t tag, hc_loc_t src,
                      uint64_t bytes, const int32_t *deps);
int32_t hc_sched_recv(hc_sched_t *s, uint32_t peer, uint32_t tag, hc_loc_t dst,
                      uint64_t bytes, const int32_t *deps);
int32_t hc_sched_reduce(hc_sched_t *s, hc_loc_t dst, hc_loc_t a, hc_loc_t b,
                        uint64_t bytes, const int32_t *deps);
int32_t hc_sched_copy(hc_sched_t *s, hc_loc_t dst, hc_loc_t src, uint64_t bytes,
                      const int32_t *deps);
/* A join point; deps given as an array (n entries, negatives ignored). */
int32_t hc_sched_nop(hc_sched_t *s, const int32_t *deps, uint32_t n);
/* Make the scratch area at least `bytes` long. */
void hc_sched_need_tmp(hc_sched_t *s, uint64_t bytes);

/* Shared-memory steps (see the top of this file). Flags are 8 bytes at a
 * multiple of 8 (a cache line of their own is the builder's business). */
int32_t hc_sched_publish(hc_sched_t *s, uint64_t flag_off, uint32_t value, const int32_t *deps);
int32_t hc_sched_wait(hc_sched_t *s, uint32_t peer, uint64_t flag_off, uint32_t value,
                      uint8_t ago, const int32_t *deps);
/* Let WAIT step `w` prefetch `lines` cache lines at data_off of the rank it
 * waits for while it polls: the data then arrives with the flag instead of
 * one cache miss later. */
void hc_sched_wait_prefetch(hc_sched_t *s, int32_t w, uint64_t data_off, uint32_t lines);
/* Make step i's staging locations (HC_BUF_SEG, HC_BUF_PEER) ring
 * locations: their entry rotates with the epoch (HC_SEG_RING_SLOTS). The
 * builder must keep the ring region from each such offset (staging need
 * grows to cover it) and guard its writes with ago = 2 * HC_SEG_RING_SLOTS. */
void hc_sched_ring(hc_sched_t *s, int32_t i);
/* dst = ((src[0] op src[1]) op src[2]) ...; nsrc >= 1; dst may be src[0]. */
int32_t hc_sched_reduce_multi(hc_sched_t *s, hc_loc_t dst, const hc_loc_t *src, uint32_t nsrc,
                              uint64_t bytes, const int32_t *deps);
/* The per-rank form: fold, in rank order, every rank's staging at peer_off,
 * with `own` in place of the executing rank's. dst is not HC_BUF_PEER. */
int32_t hc_sched_reduce_ranks(hc_sched_t *s, hc_loc_t dst, uint64_t peer_off, hc_loc_t own,
                              uint64_t bytes, const int32_t *deps);
/* Make the staging half used at least `bytes` long. */
void hc_sched_need_seg(hc_sched_t *s, uint64_t bytes);
/* dst = `bytes` at src (HC_SEND or HC_RECV offset) of rank peer's buffers,
 * read out of its process (args->cma); the WAIT it depends on must be on
 * a flag that rank published in this operation (HC_SEG_ADDR). */
int32_t hc_sched_read(hc_sched_t *s, hc_loc_t dst, uint32_t peer, hc_loc_t src, uint64_t bytes,
                      const int32_t *deps);
/* The converse: `bytes` at dst of rank peer's buffers = src (ours). */
int32_t hc_sched_write(hc_sched_t *s, uint32_t peer, hc_loc_t dst, hc_loc_t src, uint64_t bytes,
                       const int32_t *deps);
/* HC_STEP_XREDUCE: dst (RECV) here and at rank peer = own (SEND) op the
 * peer's theirs (SEND); flags (its tag) HC_XREDUCE_OWN: our dst only. In
 * place it needs TMP of `bytes` (for the READ of its kernel-copy path). */
int32_t hc_sched_xreduce(hc_sched_t *s, hc_loc_t dst, uint32_t peer, hc_loc_t own,
                         hc_loc_t theirs, uint64_t bytes, uint32_t flags, const int32_t *deps);
#define HC_XREDUCE_OWN 1u

/* Split `count` elements into `parts` nearly equal blocks: block i starts at
 * element hc_block_start(count, parts, i) (the first count % parts blocks
 * get one more). */
static inline uint64_t hc_block_start(uint64_t count, uint64_t parts, uint64_t i)
{
    uint64_t q = count / parts, r = count % parts;
    return i * q + (i < r ? i : r);
}
static inline uint64_t hc_block_len(uint64_t count, uint64_t parts, uint64_t i)
{
    return count / parts + (i < count % parts ? 1 : 0);
}

#ifdef __cplusplus
}
#endif
#endif /* HC_COLL_H_ */
