/*
 * src/stream.h - streams, the progress thread, and the tasks they run.
 *
 * A task is one unit of work that a stream orders: a collective, a
 * HcclGroupStart/End group (point-to-point schedules, collectives, fused
 * AllReduce sets), or an HcclAllReduceMulti pipeline. The same task objects
 * run blocking (NULL stream: hc_task_run drives them in the caller's
 * thread) or enqueued on a stream (the progress thread, or a thread inside
 * HcclStreamSynchronize, drives them). Everything a task communicates is
 * decided when it is created, in the caller's thread and in program order:
 * operation sequence numbers (the tag field that makes concurrent
 * operations of one communicator distinct) and Send/Recv tags, so that
 * every rank agrees on them whatever order the tasks later start in.
 *
 * A task never blocks: start() takes resources and posts what it can,
 * progress() advances it and says HCCL_E_AGAIN / HCCL_SUCCESS / an error.
 * Both are called without ctx->lock (they take it around each use of the
 * UCX worker). Semantics of streams (ordering, concurrency, priorities,
 * errors): docs/STREAMS.md and the header of src/stream.c.
 */
#ifndef HC_STREAM_H_
#define HC_STREAM_H_

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <hccl/hccl.h>

#include "comm.h"
#include "trace.h"

struct hc_task;
struct hc_stream;

typedef struct hc_task_vt {
    const char *name;
    /* Take resources and start: HCCL_E_AGAIN (running), HCCL_SUCCESS
     * (finished already) or an error. */
    int (*start)(struct hc_task *t);
    /* Advance without blocking: HCCL_E_AGAIN, HCCL_SUCCESS or an error. */
    int (*progress)(struct hc_task *t);
    /* Stop what is posted; the task then finishes with rc. */
    void (*cancel)(struct hc_task *t, int rc);
    /* Release what start took (rc: the result; AVG finishes on success). */
    void (*finish)(struct hc_task *t, int rc);
    /* "step 3/8 RECV from rank 1 ..." for the timeout message. */
    void (*describe)(struct hc_task *t, char *buf, size_t len);
    void (*destroy)(struct hc_task *t);
} hc_task_vt_t;

/* A [lo, hi) byte range a task reads or writes (stream hazard checks). */
typedef struct {
    uintptr_t lo, hi;
    int write;
} hc_range_t;

#define HC_TASK_RANGES 4

/* Sequence numbers a stream task reserved on one communicator. */
typedef struct {
    hc_comm_t *c;
    uint32_t base, n;
} hc_seq_hold_t;

typedef struct hc_task {
    const hc_task_vt_t *vt;
    hc_comm_t *c;             /* the deadline, async error and context come from it */
    const char *what;         /* "HcclAllReduce", for logs */
    int status;               /* HCCL_E_AGAIN until finished */
    uint32_t stream_id;       /* 0: blocking */
    double t_start;           /* s, when it started (deadline) */
    uint64_t t_enq;           /* trace clock at enqueue */
    /* hazards: ranges touched, or a fence (waits for, and holds back, everything) */
    hc_range_t rng[HC_TASK_RANGES];
    uint8_t nrng, fence;
    uint8_t busy;             /* progress() did local work (copies): do not yield */
    /* stream bookkeeping (src/stream.c) */
    struct hc_stream *stream;   /* NULL: blocking */
    struct hc_task *owner;      /* top-level task (holds the sequence numbers) */
    struct hc_task *next;
    uint8_t state;            /* HC_TASK_QUEUED / RUNNING / DONE */
    uint32_t max_concurrent;  /* HCCL_MAX_CONCURRENT of its communicator */
    hc_seq_hold_t *holds;     /* sequence numbers reserved while queued */
    uint32_t nholds, holds_cap;
} hc_task_t;

enum { HC_TASK_QUEUED = 0, HC_TASK_RUNNING = 1, HC_TASK_DONE = 2 };

/* ---- per-communicator state (allocated at its first stream task) ----- */

typedef struct hc_comm_streams {
    /* The schedule cache of the communicator is shared by the caller's
     * blocking operations and the progress thread's stream operations. */
    pthread_mutex_t lock;
    /* Stream tasks holding each sequence value (a tag field of 8 bits:
     * a value is reused only when the task holding it has finished). */
    uint32_t held[256];
    uint32_t pending;         /* stream tasks queued or running (g_lock) */
    /* Begin turns. Every operation that takes a sequence number (in program
     * order) takes the next ticket; operations begin (hc_op_begin: the
     * algorithm, the schedule, shared staging epochs) in ticket order, so
     * every rank begins them in the same order whatever order its streams
     * start them in. `begun`: every ticket below it has begun (or was
     * abandoned by a failed or skipped task); done[t % 256] marks tickets
     * above it that are already through. Under `lock`. */
    uint64_t next_ticket, last_ticket;
    volatile uint64_t begun;
    uint8_t done[256];
} hc_comm_streams_t;

static inline void hc_comm_lock(hc_comm_t *c)
{
    if (c->streams)
        pthread_mutex_lock(&c->streams->lock);
}
static inline void hc_comm_unlock(hc_comm_t *c)
{
    if (c->streams)
        pthread_mutex_unlock(&c->streams->lock);
}

/* Reserve n consecutive sequence numbers of c for task t (held until the
 * top-level task finishes when it is a stream task). Each one is taken
 * with hc_comm_next_seq, which waits while a stream task still holds the
 * value (only after 254 operations outstanding on one communicator).
 * Returns the first; the k-th is hc_seq_nth(first, k). *ticket: the first
 * begin turn (the k-th is *ticket + k), or HC_NO_TICKET. */
uint32_t hc_task_take_seq(hc_task_t *t, hc_comm_t *c, uint32_t n, uint64_t *ticket);
static inline uint32_t hc_seq_nth(uint32_t first, uint32_t k)
{
    return (first + k) % HC_TAG_CTRL_SEQ;
}
/* Wait (driving the progress engine) until no stream task holds sequence
 * value s of c; called by hc_comm_next_seq. */
void hc_stream_wait_seq(hc_comm_t *c, uint32_t s);

/* Begin turns (hc_comm_streams_t). HC_NO_TICKET: not ordered (the
 * communicator has never had a stream operation). */
#define HC_NO_TICKET UINT64_MAX
void hc_stream_note_ticket(hc_comm_t *c);    /* hc_comm_next_seq: take the next */
uint64_t hc_stream_last_ticket(hc_comm_t *c); /* the one it took */
int hc_stream_turn(hc_comm_t *c, uint64_t ticket); /* may it begin now? */
void hc_stream_wait_turn(hc_comm_t *c, uint64_t ticket); /* drive until it may */
void hc_stream_begun(hc_comm_t *c, uint64_t ticket); /* it has begun (or never will) */

/* ---- running tasks ---------------------------------------------------- */

/* Blocking: start, drive in this thread until done (HCCL_EXEC_TIMEOUT,
 * HcclCommAbort, failed peers), finish, destroy. Returns the result. */
int hc_task_run(hc_task_t *t);
/* Run blocking (t->stream NULL) or enqueue on t's stream (the stream then
 * owns the task). On error the task is destroyed. */
int hc_task_dispatch(hc_task_t *t);

/* The stream of an HcclStream handle (src/handle.h) in *out: NULL for
 * NULL (blocking); HCCL_E_PARA, logged with `fn`, for a destroyed handle
 * or one that is not a stream. Every entry point that takes a stream
 * starts here; internal code passes the *out pointer on. */
int hc_stream_get(HcclStream handle, const char *fn, void **out);
/* The trace id of a stream (0 for NULL). */
uint32_t hc_stream_id(void *stream);
/* The cudaStream_t of a stream from HcclStreamCreateFromCuda, else NULL. */
void *hc_stream_cuda(void *stream);
/* May task t take `bytes` more of staging memory now? Blocking tasks and
 * the first task of a stream always may (so nothing can deadlock on the
 * budget); others share HCCL_BUFFSIZE, higher priorities first. */
int hc_stream_stage_get(hc_task_t *t, uint64_t bytes);
void hc_stream_stage_put(hc_task_t *t, uint64_t bytes);

/* The executor just advanced waits on shared-memory flags (no fd wakes the
 * engine for those: it polls). Called by hc_task_exec_progress. */
void hc_stream_note_shm_wait(void);
/* Drive one executor: hc_exec_progress under ctx->lock, plus the check for
 * a posted step whose peer failed (its receive would never complete). */
int hc_task_exec_progress(hc_comm_t *c, hc_exec_t *e);

/* ---- task kinds (src/progress.c, src/fusion.c) ------------------------ */

/* Tasks shared by the kinds. `stream` is the validated stream or NULL;
 * `owner` the top-level task that holds sequence numbers (NULL: t). */
void hc_task_init(hc_task_t *t, const hc_task_vt_t *vt, hc_comm_t *c, const char *what,
                  void *stream);
/* Before creating a stream task that runs collectives on c. */
void hc_task_prepare_coll(hc_comm_t *c, void *stream);
void hc_task_add_range(hc_task_t *t, const void *p, uint64_t len, int write);
void hc_task_free_common(hc_task_t *t);
double hc_now_s(void);

/* One collective (op->args described and checked by the API layer). */
hc_task_t *hc_task_coll(hc_comm_t *c, const hc_op_t *op, void *stream, hc_task_t *owner,
                        int *rc);

/* A group (src/group.c's queued calls). */
typedef struct hc_gitem {
    int is_coll;
    hc_comm_t *c;
    hc_op_t op;               /* collectives */
    int is_send;              /* p2p */
    void *buf;
    uint64_t bytes;
    uint32_t peer;
} hc_gitem_t;
hc_task_t *hc_task_group(const hc_gitem_t *items, uint32_t n, void *stream, int *rc);

/* HcclAllReduceMulti over n tensors (arguments checked; arrays copied). */
hc_task_t *hc_task_multi(hc_comm_t *c, const void *const *inputs, void *const *outputs,
                         const uint64_t *counts, size_t n, HcclDataType dt, size_t es,
                         HcclReduceOp op, const char *api, void *stream, hc_task_t *owner,
                         int *rc);

/* Per-process counters of the fusion path (tests, examples via the log). */
typedef struct {
    uint64_t calls;       /* HcclAllReduceMulti calls and fused group sets */
    uint64_t tensors;     /* tensors they carried */
    uint64_t net_ops;     /* AllReduce operations they issued */
    uint64_t buckets;     /* of which packed buckets */
    uint64_t gathered;    /* of which gathered in place (DIRECT on a list) */
} hc_fusion_counters_t;
void hc_fusion_counters(hc_fusion_counters_t *out);

/* Trace an operation that hc_op_begin started (comm.c calls it). */
void hc_task_trace_begin(hc_running_t *r, const char *algo, uint32_t seq);

/* ---- process context hooks ------------------------------------------ */

/* Wait for every stream task of c to finish, then free c->streams
 * (hc_comm_destroy). */
void hc_stream_comm_fini(hc_comm_t *c);
/* Stop the context's progress thread (the context is being destroyed). */
void hc_engine_destroy(hc_context_t *ctx);

#endif /* HC_STREAM_H_ */
