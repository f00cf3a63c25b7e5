/*
 * src/exec/exec.h - the schedule executor: the one state machine in hcomm.
 *
 * hc_exec_start binds a schedule to buffers and a transport; every call to
 * hc_exec_progress posts the steps whose dependencies are done, runs local
 * steps (REDUCE, COPY) and collects completions, without ever blocking.
 * Waiting (and the deadline) belongs to the caller, so the same executor
 * serves blocking calls, streams and the in-process loopback tests.
 *
 * Event-driven, so that a call costs O(transfers in flight + steps that
 * became ready), not O(steps): each step counts its unfinished
 * dependencies, a completed step decrements those of its dependents (an
 * index built at start), and a step whose count reaches 0 joins a FIFO of
 * ready steps. Ready steps start in that order (initially: index order).
 */
#ifndef HC_EXEC_H_
#define HC_EXEC_H_

#include <stddef.h>
#include <stdint.h>
#include <hccl/hccl_types.h>
#include "coll/coll.h"
#include "src/transport/transport.h"

/* 64-bit UCX tag: | src rank 16 | comm id 20 | op seq 8 | step tag 20 | */
#define HC_TAG_SRC_BITS 16
#define HC_TAG_COMM_BITS 20
#define HC_TAG_SEQ_BITS 8
#define HC_TAG_P2P_SEQ 0xffu /* seq value reserved for Send/Recv */
static inline uint64_t hc_tag_make(uint32_t src, uint32_t comm_id, uint32_t seq, uint32_t step)
{
    return ((uint64_t)(src & 0xffffu) << 48) | ((uint64_t)(comm_id & 0xfffffu) << 28) |
           ((uint64_t)(seq & 0xffu) << 20) | (uint64_t)(step & HC_TAG_MAX);
}

enum { HC_ST_WAIT = 0, HC_ST_POSTED = 1, HC_ST_DONE = 2 };

/* Where a schedule's shared staging is for one operation (coll.h top;
 * src/comm/shm.h builds it for communicators, src/exec/transport_loop.h for tests). */
typedef struct hc_shm_bind {
    char *const *half;             /* [nranks]: rank q's staging half for this epoch */
    uint32_t nranks;
    uint64_t epoch;                /* >= 1; consecutive per communicator */
    uint64_t epoch0;               /* the communicator's first: WAITs with ago reaching
                                    * before it hold at once (nothing ran there yet) */
    const volatile uint64_t *gate; /* NULL, or: start only once *gate >= epoch - 1
                                    * (the previous operation finished here) */
    /* NULL, or set once the previous operation ended here: whether its
     * schedule waited for every rank (then the ago = 2 waits on the
     * completion flags hold at once; coll.h top) */
    const volatile uint8_t *prev_all;
    /* NULL, or the least epoch every other rank is known to have finished
     * (completion flags seen by a WAIT on HC_SEG_DONE); read and raised by
     * the executor so that a run-ahead guard rarely reads flags */
    uint64_t *seen_done;
    /* NULL, or [nranks]: each rank's process id, for HC_STEP_READ */
    const int32_t *pid;
    /* NULL, or the communicator's registered buffers (src/transport/mover.h), for
     * HC_STEP_XREDUCE */
    const struct hc_win *wins;
    /* more ranks on the host than CPUs: announce this rank's CPU
     * (HC_SEG_PRESENCE, hc_exec_awaits_running) */
    int presence;
} hc_shm_bind_t;

/* A scatter/gather list: the operation's SEND and RECV buffers as
 * segments of one logical buffer (HcclAllReduceMulti without packing,
 * src/sched/fusion.c). Segment i covers logical bytes [off, off + bytes) at
 * send + (x - off) and recv + (x - off); sorted by off, contiguous. */
typedef struct hc_iov {
    const char *send;
    char *recv;
    uint64_t off, bytes;
} hc_iov_t;

typedef struct hc_exec {
    const hc_sched_t *s;
    char *base[HC_NBUFS_ALL]; /* HC_BUF_SEG: own staging half (hc_exec_bind_shm) */
    const hc_transport_ops_t *tp;
    void *tp_ctx;
    uint32_t rank, comm_id, seq;
    HcclDataType dtype;
    HcclReduceOp op;
    uint8_t *st;       /* per step: HC_ST_* */
    hc_xfer_t *x;      /* per step (SEND/RECV) */
    uint32_t *npend;   /* per step: dependencies not done yet */
    uint32_t *rdep_off; /* dependents of step i: rdep[rdep_off[i] .. rdep_off[i+1]) */
    uint32_t *rdep;
    uint32_t *ready;   /* steps ready to start: [rhead, rtail); flag steps are
                        * put in front (complete()), the rest in order */
    uint32_t rhead, rtail;
    uint32_t *posted;  /* transfers in flight (unordered) */
    uint32_t nposted;
    void *ws;          /* all of the per-step arrays live here */
    int ws_owned;
    uint32_t lo;       /* steps below lo are all done */
    uint32_t ndone;
    uint32_t nissued;  /* steps started (posted or run) */
    int status;        /* HCCL_E_AGAIN while running */
    /* counters for diagnostics and the inter-host byte counter */
    uint64_t bytes_sent;
    /* timeline (src/exec/trace.h): NULL unless HCCL_TRACE_FILE is set; set by the
     * caller after hc_exec_start */
    const struct hc_trace_op *trace;
    /* shared staging (hc_exec_bind_shm); half == NULL: none */
    char *const *half;
    const int32_t *pid; /* [nranks] (hc_shm_bind_t) */
    const struct hc_win *wins; /* (hc_shm_bind_t) */
    uint32_t nranks;
    uint64_t epoch, epoch0;
    const volatile uint64_t *gate;
    const volatile uint8_t *prev_all;
    uint64_t *seen_done;
    uint64_t ring_off; /* ring locations: this epoch's line (coll.h) */
    int nt_stores;     /* a large copy ran since the last PUBLISH (exec.c) */
    int presence;      /* (hc_shm_bind_t) */
    int cpu;           /* presence: CPU + 1 announced at the start; 0 not yet, -1 unknown */
    /* SEND/RECV given as a scatter/gather list (hc_exec_set_iov) */
    const hc_iov_t *iov;
    uint32_t niov;
    /* the operation's arguments as published to the peers (hc_exec_set_args;
     * coll.h HC_SEG_ARGS); has_args 0: none (service collectives) */
    uint64_t args[4];
    uint64_t checked; /* peers q < 64 whose arguments matched ours (bit q) */
    int has_args;
    int bad;          /* HCCL_E_PARA once a peer disagreed: data steps are
                       * skipped, flags still published, the result is bad */
} hc_exec_t;

/* Publish the operation's arguments to the peers through shared staging
 * (coll.h HC_SEG_ARGS) and check theirs: a rank that disagrees on the
 * collective, count, type, op or root, or whose buffers are smaller than
 * a READ, WRITE or XREDUCE needs, fails the operation with HCCL_E_PARA
 * on every rank that sees it, without touching its buffers (src/exec/exec.c,
 * "Ranks that disagree"). After hc_exec_start. */
void hc_exec_set_args(hc_exec_t *e, const hc_coll_args_t *a);

/* Workspace bytes hc_exec_start needs for s (to cache with the schedule). */
size_t hc_exec_ws_size(const hc_sched_t *s);

/* Steps 0 .. i-1 of the schedule already ran outside the executor, with
 * the same effects (hc_exec_inline_run): progress starts with what depends
 * on nothing else. After hc_exec_start and the binding of staging. */
void hc_exec_resume_at(hc_exec_t *e, uint32_t i);

/* Run a schedule marked hc_sched_t.fast (local steps, PUBLISH and WAIT on
 * shared staging) on the caller's stack, without hc_exec_start's set-up
 * (src/comm/fastlane.h). inline_init fills in only what those steps read; bind
 * staging after it (hc_exec_bind_shm). inline_run runs the steps in index
 * order and returns s->nsteps when all ran (the completion flag stored,
 * e->status HCCL_SUCCESS), the index of the first WAIT still unsatisfied
 * after `polls` polls (that step and the ones after it not run: hand them
 * to an executor with hc_exec_resume_at), or UINT32_MAX when a PUBLISH
 * failed (e->status says why). */
void hc_exec_inline_init(hc_exec_t *e, const hc_sched_t *s, void *const bufs[HC_NBUFS],
                         uint32_t rank, HcclDataType dtype, HcclReduceOp op);
uint32_t hc_exec_inline_run(hc_exec_t *e, unsigned polls);

/* Run the schedule on a scatter/gather list instead of contiguous SEND and
 * RECV buffers (after hc_exec_start). Only schedules without messages whose
 * local steps address SEND and RECV at one offset per step qualify (the
 * DIRECT algorithms); HCCL_E_NOT_SUPPORT otherwise, nothing changed. */
int hc_exec_set_iov(hc_exec_t *e, const hc_iov_t *iov, uint32_t niov);

/* Bind. bufs[HC_BUF_TMP] must hold s->tmp_bytes. ws: NULL (allocated here)
 * or hc_exec_ws_size(s) bytes. Returns HCCL_SUCCESS or HCCL_E_MEMORY. */
int hc_exec_start(hc_exec_t *e, const hc_sched_t *s, void *const bufs[HC_NBUFS],
                  const hc_transport_ops_t *tp, void *tctx, uint32_t rank,
                  uint32_t comm_id, uint32_t seq, HcclDataType dtype, HcclReduceOp op,
                  void *ws);
/* Give a started executor its shared staging (before the first progress);
 * a schedule with seg_bytes > 0 fails without one. */
void hc_exec_bind_shm(hc_exec_t *e, const hc_shm_bind_t *b);
/* With presence (more ranks on the host than CPUs) and a schedule whose
 * waits are all on a producer that never waits itself
 * (sched->spin_on_producer): 1 if every step the executor waits on is a
 * shared-staging WAIT on one rank that runs this operation on another CPU
 * and is not yielding its own. That rank is about to publish; yielding our
 * CPU would hand it to a rank on ours that then waits too, and the time
 * of two process hand-overs (~10 us here) would be the reader's. */
int hc_exec_awaits_running(const hc_exec_t *e);
/* Say (presence) whether this rank's wait loop yields its CPU. */
void hc_exec_set_yielding(hc_exec_t *e, int yielding);
/* Advance without blocking: HCCL_E_AGAIN (running), HCCL_SUCCESS (done) or
 * the error that stopped it. Does not call tp->progress itself. */
int hc_exec_progress(hc_exec_t *e);
/* Cancel whatever is posted; the executor is then finished with `rc`. */
void hc_exec_cancel(hc_exec_t *e, int rc);
/* Release the workspace if hc_exec_start allocated it. */
void hc_exec_fini(hc_exec_t *e);
/* Describe what it waits for: "step 5/12 RECV from rank 3 (tag 7, 4096 B)".
 * Returns the index of the first posted or waiting step, or -1. */
int hc_exec_describe_wait(const hc_exec_t *e, char *buf, size_t len, uint32_t *peer);

#endif /* HC_EXEC_H_ */
