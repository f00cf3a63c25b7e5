/*
 * coll/coll.h - the schedule-building interface.
 *
 * An algorithm is a pure function: (rank, nranks, topology view, count,
 * datatype, chunk size) -> schedule. A schedule is the list of steps ONE rank
 * performs for one collective: SEND to a peer, RECV from a peer, REDUCE two
 * local regions into a third, COPY a region, or NOP (a join point). Each
 * step names the steps it depends on; a step starts only when all of them
 * have completed. Builders do no I/O and know nothing about transports; the
 * executor (src/exec.c) knows nothing about algorithms.
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

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HC_BUF_SEND = 0,
    HC_BUF_RECV = 1,
    HC_BUF_TMP = 2,
    HC_NBUFS
} hc_buf_t;

typedef enum {
    HC_STEP_SEND = 0, /* send `bytes` at `a` to `peer` */
    HC_STEP_RECV,     /* receive `bytes` from `peer` into `dst` */
    HC_STEP_REDUCE,   /* dst = a (op) b, bytes / elemsize elements */
    HC_STEP_COPY,     /* dst = a, `bytes` (memmove) */
    HC_STEP_NOP,      /* completes when its dependencies have */
    HC_STEP_KINDS
} hc_step_kind_t;

#define HC_TAG_BITS 20
#define HC_TAG_MAX ((1u << HC_TAG_BITS) - 1)

typedef struct {
    uint64_t off; /* bytes from the start of the buffer */
    uint8_t buf;  /* hc_buf_t */
} hc_loc_t;

static inline hc_loc_t hc_loc(hc_buf_t buf, uint64_t off)
{
    hc_loc_t l = {off, (uint8_t)buf};
    return l;
}
#define HC_SEND(off) hc_loc(HC_BUF_SEND, (off))
#define HC_RECV(off) hc_loc(HC_BUF_RECV, (off))
#define HC_TMP(off) hc_loc(HC_BUF_TMP, (off))

typedef struct {
    uint8_t kind;     /* hc_step_kind_t */
    uint32_t peer;    /* SEND/RECV: communicator rank */
    uint32_t tag;     /* SEND/RECV */
    hc_loc_t dst, a, b;
    uint64_t bytes;
    uint32_t dep_off; /* first dependency in sched->deps */
    uint32_t ndeps;
} hc_step_t;

typedef struct hc_sched {
    hc_step_t *steps;
    uint32_t nsteps, steps_cap;
    uint32_t *deps;
    uint32_t ndeps, deps_cap;
    uint64_t tmp_bytes; /* scratch the executor must provide */
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
 *  ALLGATHER      SEND count, RECV nranks*count;
 *                 in place: SEND == RECV + rank*count*esize.
 *  SCATTER        SEND nranks*count on root only, RECV count;
 *                 in place (root): RECV == SEND + root*count*esize.
 *  ALLTOALL       SEND nranks*count, RECV nranks*count.
 *  ALLTOALLV      SEND/RECV as given by counts/displs (elements).
 *  BARRIER        no buffers, count 0.
 */

/* What an algorithm may know about the topology. Built by topo/; the
 * defaults (all NULL / 0) mean "flat: every rank equally far". */
typedef struct hc_topo_view {
    const uint32_t *ring;     /* ring[i] = rank at ring position i; NULL = 0..n-1 */
    uint32_t ngroups;         /* fast groups (0 or 1 = flat) */
    const uint32_t *group_of; /* group index of each rank (ngroups > 1) */
    uint32_t nnodes;          /* hosts (0 or 1 = one host) */
    const uint32_t *node_of;  /* host index of each rank (nnodes > 1) */
} hc_topo_view_t;

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
    /* ALLTOALLV: arrays of nranks entries, in elements */
    const uint64_t *scounts, *sdispls, *rcounts, *rdispls;
    const hc_topo_view_t *topo; /* never NULL */
} hc_coll_args_t;

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
} hc_algo_t;

/* The algorithm tables (coll/algos.c). */
const hc_algo_t *hc_coll_algos(hc_coll_t coll, int *nalgos);
const hc_algo_t *hc_coll_find_algo(hc_coll_t coll, const char *name);
const char *hc_coll_name(hc_coll_t coll);

/* ---- building ------------------------------------------------------ */

void hc_sched_init(hc_sched_t *s, size_t esize);
void hc_sched_reset(hc_sched_t *s); /* keep the memory, drop the steps */
void hc_sched_free(hc_sched_t *s);

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
